NAME r
ROWS
 N obj
 L c
COLUMNS
    x obj 1 c 1
RANGES
    rng obj 2
ENDATA
