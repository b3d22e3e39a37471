* An indicator constraint (INDICATORS section): outside memsched's model, refused (ParseError)
NAME          IND
ROWS
 N  COST
 L  LIM
COLUMNS
    MARKER                 'MARKER'                 'INTORG'
    B         COST         1.0
    MARKER                 'MARKER'                 'INTEND'
    X         COST        -1.0   LIM          1.0
RHS
    RHS       LIM          3.0
BOUNDS
 BV BND       B
INDICATORS
 IF LIM       B            1
ENDATA
