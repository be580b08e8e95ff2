SELECT
    count(*) AS event_count,
    count(flag) AS flag_known,
    sum(qty) AS total_qty,
    max(seen_at) AS last_seen
FROM source('events')
