NAME x
ROWS
 N obj
 L c
COLUMNS
    x obj 1 c
RHS
ENDATA
