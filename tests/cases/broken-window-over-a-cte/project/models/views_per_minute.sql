WITH c AS (SELECT page, user_id, viewed_at FROM source('page_views') WHERE page <> 'x')
SELECT page, window_start, window_end, COUNT(*) AS views
FROM TABLE(TUMBLE(TABLE c, DESCRIPTOR(viewed_at), INTERVAL '1' MINUTE))
GROUP BY page, window_start, window_end
