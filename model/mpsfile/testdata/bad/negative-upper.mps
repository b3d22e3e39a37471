NAME neg
ROWS
 N obj
 G c
COLUMNS
    x obj 1 c 1
RHS
    rhs c -5
BOUNDS
 UP bnd x -2
ENDATA
