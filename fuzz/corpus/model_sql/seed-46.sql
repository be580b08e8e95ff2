SELECT
    category,
    SUM(price * qty) AS revenue,
    COUNT(1) AS line_count,
    MAX(CAST(qty AS DECIMAL(12, 2)) + fee) AS top_line
FROM source('events')
WHERE category IS NOT NULL
GROUP BY category
