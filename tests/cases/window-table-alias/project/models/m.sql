SELECT w.page, w.window_start, w.window_end, COUNT(*) AS views
FROM TABLE(TUMBLE(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '1' MINUTE)) AS w
WHERE w.page <> 'admin'
GROUP BY w.page, w.window_start, w.window_end
