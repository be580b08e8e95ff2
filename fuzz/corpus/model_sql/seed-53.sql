SELECT
    category,
    count(*) AS event_count,
    sum(qty) AS total_qty
FROM source('events')
GROUP BY category
HAVING count(*) >= 2 AND sum(qty) < 10
