NAME si
ROWS
 N obj
COLUMNS
    x obj 1
BOUNDS
 SI bnd x 5
ENDATA
