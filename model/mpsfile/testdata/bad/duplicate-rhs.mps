NAME dup
ROWS
 N obj
 L c
COLUMNS
    x obj 1 c 1
RHS
    rhs c 4
    rhs c 5
ENDATA
