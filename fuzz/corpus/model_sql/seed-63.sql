SELECT
    id,
    qty,
    big,
    ratio,
    price,
    fee,
    note,
    flag,
    seen_at,
    CAST(qty AS BIGINT) AS qty_as_int64,
    CAST(big AS INT) AS big_as_int32,
    CAST(price AS DOUBLE) AS price_as_float64,
    CAST(qty AS DECIMAL(10, 2)) AS qty_as_decimal,
    CAST(id AS VARCHAR) AS id_as_string
FROM source('events')
