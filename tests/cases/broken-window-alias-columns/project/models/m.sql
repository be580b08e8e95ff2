SELECT a, COUNT(*) AS c
FROM TABLE(TUMBLE(TABLE source('page_views'), DESCRIPTOR(viewed_at), INTERVAL '1' MINUTE)) AS w(a, b, c2, d, e, f, g)
GROUP BY a, window_start, window_end
