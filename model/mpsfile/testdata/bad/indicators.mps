NAME ind
ROWS
 N obj
 L c
COLUMNS
    b obj 1
    x obj 1 c 1
BOUNDS
 BV bnd b
INDICATORS
 IF c b 1
ENDATA
