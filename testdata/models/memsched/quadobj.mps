* A quadratic objective (QUADOBJ): outside memsched's model, refused (ParseError).
NAME          QUAD
ROWS
 N  COST
 G  LIM
COLUMNS
    X         COST         1.0   LIM          1.0
RHS
    RHS       LIM          2.0
QUADOBJ
    X         X            2.0
ENDATA
