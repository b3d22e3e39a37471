NAME sc
ROWS
 N obj
COLUMNS
    x obj 1
BOUNDS
 SC bnd x 5
ENDATA
