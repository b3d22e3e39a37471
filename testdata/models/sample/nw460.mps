*
* small test problem from Nemhauser and Wolsey, page 460.
*
* knapsack problem with violated minimal covers
*
NAME          nwp460
ROWS                                
 N  obj
 L  knap1
 L  knap2
COLUMNS                             
    SET00001  'MARKER'                 'INTORG'              
    x1        obj         -77.000000
    x1        knap1       774.000000
    x1        knap2        67.000000
    x2        obj          -6.000000
    x2        knap1        76.000000
    x2        knap2        27.000000
    x3        obj          -3.000000
    x3        knap1        22.000000
    x3        knap2       794.000000
    x4        obj          -6.000000
    x4        knap1        42.000000
    x4        knap2        53.000000
    x5        obj         -33.000000
    x5        knap1        21.000000
    x5        knap2       234.000000
    x6        obj         -13.000000
    x6        knap1       760.000000
    x6        knap2        32.000000
    x7        obj        -110.000000
    x7        knap1       818.000000
    x7        knap2       797.000000
    x8        obj         -21.000000
    x8        knap1        62.000000
    x8        knap2        97.000000
    x9        obj         -47.000000
    x9        knap1       785.000000
    x9        knap2       435.000000
RHS                                 
    RHS       knap1      1500.000000
    RHS       knap2      1500.000000
BOUNDS                              
 BV ONE       x1            1.000000
 BV ONE       x2            1.000000
 BV ONE       x3            1.000000
 BV ONE       x4            1.000000
 BV ONE       x5            1.000000
 BV ONE       x6            1.000000
ENDATA                              
