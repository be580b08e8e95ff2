SELECT
    id,
    CASE WHEN qty >= 10 THEN 'bulk' WHEN qty >= 2 THEN 'few' ELSE 'single' END AS size,
    CASE category WHEN 'a' THEN 1 WHEN 'b' THEN 2 END AS category_rank,
    COALESCE(note, category, 'none') AS label,
    NULLIF(qty, 0) AS nonzero_qty,
    COALESCE(price, fee) AS amount,
    qty BETWEEN 2 AND 5 AS mid,
    qty NOT BETWEEN 2 AND 5 AS outside,
    category IN ('a', 'c') AS a_or_c,
    id NOT IN (1, 2) AS not_first,
    CASE WHEN qty = 0 THEN 0 ELSE 100 / qty END AS per_unit
FROM source('events')
