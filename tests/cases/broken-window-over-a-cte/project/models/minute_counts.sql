-- Views per page and minute, renamed so that a second window can read it: grouping by
-- window_time keeps it as the rows' time attribute.
SELECT page, window_start AS minute_start, window_end AS minute_end,
       window_time AS minute_time, COUNT(*) AS views
FROM TABLE(TUMBLE(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '1' MINUTE))
GROUP BY page, window_start, window_end, window_time
