NAME t
ROWS extra
 N obj
COLUMNS
    x obj 1
ENDATA
