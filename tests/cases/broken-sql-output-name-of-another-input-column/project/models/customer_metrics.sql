SELECT customer_id, SUM(amount) AS "customer_id"
FROM source('orders')
GROUP BY customer_id
