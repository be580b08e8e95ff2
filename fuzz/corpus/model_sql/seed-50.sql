SELECT
    category,
    sum(qty),
    sum(big),
    sum(ratio),
    sum(price),
    sum(fee),
    count(*),
    count(note),
    min(qty),
    max(big),
    min(ratio),
    max(price),
    min(note),
    max(seen_at)
FROM source('events')
GROUP BY category
