* A semi-continuous column (SC bound): outside memsched's model, refused (ParseError).
NAME          SC
ROWS
 N  COST
 G  LIM
COLUMNS
    X         COST         1.0   LIM          1.0
RHS
    RHS       LIM          0.5
BOUNDS
 LO BND       X            1.0
 SC BND       X            5.0
ENDATA
