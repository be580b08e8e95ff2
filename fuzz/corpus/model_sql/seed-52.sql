SELECT
    id,
    category,
    qty
FROM ref('latest_events')
WHERE qty > 5
