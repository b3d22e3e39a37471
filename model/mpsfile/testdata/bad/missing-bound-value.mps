NAME b
ROWS
 N obj
COLUMNS
    x obj 1
BOUNDS
 UP bnd x
ENDATA
