-- The average load time over the last minute, every 30 seconds.
SELECT window_start, window_end,
       AVG(load_ms) AS avg_load_ms,
       MAX(load_ms) AS max_load_ms
FROM TABLE(HOP(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '30' SECOND, INTERVAL '1' MINUTE))
GROUP BY window_start, window_end
