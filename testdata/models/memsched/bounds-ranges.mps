* Every bound type (UP LO FX FR MI PL BV LI UI), RANGES on E rows (R > 0 and R < 0), L and G
* rows, OBJSENSE with MAX on the next line and an objective constant from the RHS section
* (the constant is -RHS: 10 here). The issue's "what works and must stay so", solved.
NAME          BNDRNG
OBJSENSE
    MAX
ROWS
 N  OBJ
 E  R1
 E  R2
 L  R3
 G  R4
 L  R5
COLUMNS
    A         OBJ          1.0   R1           1.0
    A         R5          -1.0
    B         OBJ          1.0   R2           1.0
    C         OBJ          1.0   R3           1.0
    D         OBJ          1.0   R1           1.0
    D         R3           1.0   R5           1.0
    E         OBJ          1.0   R2           1.0
    F         OBJ         -2.0   R3           1.0
    F         R4          -1.0
    G         OBJ          1.0   R4           1.0
    H         OBJ          1.0   R4           1.0
RHS
    RHS       R1           2.0   R2           4.0
    RHS       R3           6.0   R4           3.0
    RHS       R5           1.0   OBJ        -10.0
RANGES
    RNG       R1           3.0   R2          -2.0
    RNG       R3           4.0   R4           3.0
BOUNDS
 UP BND       A            4.0
 LO BND       B            1.0
 UP BND       B            3.0
 FX BND       C            2.0
 FR BND       D
 MI BND       E
 UP BND       E            5.0
 PL BND       F
 BV BND       G
 LI BND       H            2
 UI BND       H            6
ENDATA
