NAME x
ROWS
 N obj
 N free
 L c
COLUMNS
    x c 1
RANGES
    RNG free 3
ENDATA
