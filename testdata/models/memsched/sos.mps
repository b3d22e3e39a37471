* A special ordered set (SOS section): outside memsched's model, refused (ParseError).
NAME          SOS
ROWS
 N  COST
 L  LIM
COLUMNS
    X         COST        -1.0   LIM          1.0
    Y         COST        -2.0   LIM          1.0
RHS
    RHS       LIM          3.0
BOUNDS
 UP BND       X            2.0
 UP BND       Y            2.0
SOS
 S1 SOS       s1
    s1        X            1.0
    s1        Y            2.0
ENDATA
