SELECT page, SUM(views) AS views, COUNT(*) AS minutes
FROM ref('per_minute')
GROUP BY page
