SELECT
    id,
    seen_at,
    FLOOR(seen_at TO SECOND) AS to_second,
    FLOOR(seen_at TO MINUTE) AS to_minute,
    FLOOR(seen_at TO HOUR) AS to_hour,
    FLOOR(seen_at TO DAY) AS to_day,
    CEIL(seen_at TO SECOND) AS up_second,
    CEIL(seen_at TO MINUTE) AS up_minute,
    CEIL(seen_at TO HOUR) AS up_hour,
    CEIL(seen_at TO DAY) AS up_day
FROM source('events')
