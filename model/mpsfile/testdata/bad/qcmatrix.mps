NAME q
ROWS
 N obj
 L c
COLUMNS
    x obj 1 c 1
QCMATRIX c
    x x 1
ENDATA
