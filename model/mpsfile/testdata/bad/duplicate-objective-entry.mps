NAME dup
ROWS
 N obj
 L c
COLUMNS
    x obj 1 c 1
    x obj 2
ENDATA
