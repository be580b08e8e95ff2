SELECT window_start, window_end, COUNT(*) AS views
FROM TABLE(TUMBLE(DATA => TABLE source('page_views'), TIMECOL => DESCRIPTOR(viewed_at), SIZE => INTERVAL '1' MINUTE))
GROUP BY window_start, window_end
