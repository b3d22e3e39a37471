NAME sos
ROWS
 N obj
COLUMNS
    x obj 1
    y obj 1
SOS
 S1 SOS s1
    s1 x 1
    s1 y 2
ENDATA
