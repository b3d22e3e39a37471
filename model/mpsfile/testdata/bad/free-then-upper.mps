NAME dup
ROWS
 N obj
 G c
COLUMNS
    x obj 1 c 1
RHS
    rhs c -5
BOUNDS
 FR bnd x
 UP bnd x 3
ENDATA
