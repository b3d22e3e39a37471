NAME sets
ROWS
 N obj
 L c
COLUMNS
    x obj -1 c 1
    y obj -1 c 1
RHS
    rhs c 10
BOUNDS
 UP b1 x 2
 UP b2 y 3
ENDATA
