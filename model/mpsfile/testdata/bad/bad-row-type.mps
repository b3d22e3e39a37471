NAME x
ROWS
 N obj
 Q c
COLUMNS
    x obj 1
ENDATA
