NAME tc
ROWS
 N obj $ the objective
 L c
COLUMNS
    x obj 1 c 1
ENDATA
