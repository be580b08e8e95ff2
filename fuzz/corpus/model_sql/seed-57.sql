SELECT
    id,
    category,
    qty
FROM source('events')
WHERE id IS NOT NULL
