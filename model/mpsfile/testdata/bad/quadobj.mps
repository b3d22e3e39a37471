NAME q
ROWS
 N obj
COLUMNS
    x obj 1
QUADOBJ
    x x 2
ENDATA
