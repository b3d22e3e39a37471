* A conic constraint (CSECTION): outside memsched's model, refused (ParseError).
NAME          CONE
ROWS
 N  COST
COLUMNS
    X         COST         1.0
    Y         COST         1.0
    Z         COST         1.0
BOUNDS
 FR BND       Y
 FR BND       Z
CSECTION      K1        0.0        QUAD
    X
    Y
    Z
ENDATA
