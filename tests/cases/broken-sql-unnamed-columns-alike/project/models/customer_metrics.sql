SELECT customer_id, SUM(amount + 1), SUM(amount+1)
FROM source('orders')
GROUP BY customer_id
