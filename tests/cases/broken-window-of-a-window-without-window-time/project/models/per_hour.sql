SELECT page, window_start, window_end, SUM(views) AS views
FROM TABLE(TUMBLE(TABLE ref('per_minute'), DESCRIPTOR(minute_end), INTERVAL '1' HOUR))
GROUP BY page, window_start, window_end
