SELECT page, COUNT(*) AS users
FROM ref('latest_view')
GROUP BY page
