    x c 1
ENDATA
