SELECT
    category,
    AVG(qty) AS avg_qty,
    AVG(big) AS avg_big,
    AVG(ratio) AS avg_ratio,
    AVG(price) AS avg_price,
    AVG(price * qty) AS avg_line,
    COUNT(DISTINCT note) AS notes,
    COUNT(DISTINCT qty % 2) AS parities
FROM source('events')
WHERE category IS NOT NULL
GROUP BY category
