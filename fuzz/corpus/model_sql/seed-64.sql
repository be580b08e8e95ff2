SELECT
    id,
    CASE WHEN category = 'boolean' THEN CAST(note AS BOOLEAN) END AS as_boolean,
    CASE WHEN category = 'double' THEN CAST(note AS DOUBLE) END AS as_double,
    CASE WHEN category = 'decimal' THEN CAST(note AS DECIMAL(5, 2)) END AS as_decimal,
    CASE WHEN category = 'int' THEN CAST(note AS INT) END AS as_int,
    CASE WHEN category = 'timestamp' THEN CAST(note AS TIMESTAMP) END AS as_timestamp
FROM source('events')
WHERE note IS NOT NULL
