-- Each user's visits: the views no more than 5 minutes apart form one session, written
-- once when the watermark passes the session's end (its last view plus 5 minutes).
SELECT user_id, window_start, window_end,
       COUNT(*) AS views,
       COUNT(DISTINCT page) AS pages,
       MAX(load_ms) AS slowest_ms
FROM TABLE(SESSION(TABLE source('page_views') PARTITION BY user_id, DESCRIPTOR(viewed_at), INTERVAL '5' MINUTE))
GROUP BY user_id, window_start, window_end
