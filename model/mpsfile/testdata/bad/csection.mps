NAME cone
ROWS
 N obj
COLUMNS
    x obj 1
    y obj 1
CSECTION k1 0.0 QUAD
    x
    y
ENDATA
