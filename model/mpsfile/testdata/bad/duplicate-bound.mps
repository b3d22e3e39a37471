NAME dup
ROWS
 N obj
 L c
COLUMNS
    x obj -1 c 1
RHS
    rhs c 10
BOUNDS
 UP bnd x 4
 UP bnd x 5
ENDATA
