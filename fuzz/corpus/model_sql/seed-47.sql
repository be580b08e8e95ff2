SELECT
    category,
    price * qty AS line_total
FROM source('events')
WHERE category IS NOT NULL AND qty > 0
