NAME inf
ROWS
 N obj
 E c
COLUMNS
    x obj 1 c 1
RHS
    rhs c Infinity
ENDATA
