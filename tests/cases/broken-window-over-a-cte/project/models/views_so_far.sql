-- Views of each page since the start of the hour, updated every 20 minutes.
SELECT page, window_start, window_end, COUNT(*) AS views
FROM TABLE(CUMULATE(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '20' MINUTE, INTERVAL '1' HOUR))
WHERE load_ms < 5000
GROUP BY page, window_start, window_end
