-- A window of windows: the minutes' counts summed per page and hour.
SELECT page, window_start, window_end, SUM(views) AS views, COUNT(*) AS busy_minutes
FROM TABLE(TUMBLE(TABLE ref('minute_counts'), DESCRIPTOR(minute_time), INTERVAL '1' HOUR))
GROUP BY page, window_start, window_end
